export * from './template';
export * from './configuration';
export * from './canonical-json';
export * from './pricing';
export * from './resolve';
