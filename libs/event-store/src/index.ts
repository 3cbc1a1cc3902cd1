export * from './event-store.port';
export * from './sqlite-event-store';
