export * from './contract';
export * from './conditions';
export * from './duration';
export * from './launch-options';
export * from './end';
export * from './failures';
export * from './state';
export * from './decide';
