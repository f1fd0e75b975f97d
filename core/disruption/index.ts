export * from './budgets';
export * from './candidates';
export * from './price';
export * from './drift';
export * from './round';
