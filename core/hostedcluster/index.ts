export * from './schema';
export * from './role-arn';
export * from './validate';
export * from './secrets';
