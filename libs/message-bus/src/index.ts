export * from './message-bus.port';
export * from './sqlite-message-bus';
export * from './kafka-message-bus';
