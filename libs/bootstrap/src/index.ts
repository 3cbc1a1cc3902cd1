export * from './domain.module';
export * from './prepare-runtime';
export * from './projections';
