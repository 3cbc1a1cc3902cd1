export * from './read-store.port';
export * from './sqlite-read-store';
export * from './mongo-read-store';
