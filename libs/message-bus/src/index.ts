export * from './message-bus.port';
export * from './sqlite-message-bus';
