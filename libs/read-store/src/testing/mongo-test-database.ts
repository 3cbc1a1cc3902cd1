import { randomUUID } from 'node:crypto';

/**
 * The MongoDB server of the engine suites (`npm run test:engines` starts one and sets
 * MONGODB_URL). A suite that needs it fails at once, with what to do, when it is not set.
 */
export function requireMongoUrl(): string {
  const url = process.env.MONGODB_URL?.trim();
  if (!url) {
    throw new Error('MONGODB_URL is not set: run the engine suites with `npm run test:engines`, or start scripts/engines/mongo.sh and set MONGODB_URL=mongodb://127.0.0.1:27018');
  }
  return url;
}

/** A database name of its own for one suite or test app, so runs against a shared server do not meet. */
export function uniqueDatabaseName(purpose: string): string {
  return `${purpose}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}
