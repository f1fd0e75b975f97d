export * from './pods';
export * from './nodeclaims';
export * from './reserved';
export * from './usage';
export * from './nodes';
export * from './batch';
export * from './nodeclass-status';
export * from './batch-gate';
