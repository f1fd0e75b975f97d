export * from './contract';
export * from './conditions';
export * from './duration';
export * from './launch-options';
