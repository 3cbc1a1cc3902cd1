export * from './errors';
export * from './ids';
export * from './clock';
export * from './html';
export * from './config';
export * from './money';
export * from './keys';
export * from './sqlite';
