export * from './messages';
export * from './actions';
