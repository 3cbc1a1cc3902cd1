export * from './file-store.port';
export * from './directory-file-store';
