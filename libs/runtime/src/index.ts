export * from './projection-registry';
export * from './runtime.module';
export * from './stores';
export * from './config.module';
export * from './reactor-registry';
export * from './relay';
