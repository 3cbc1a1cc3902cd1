import { createHash } from 'node:crypto';
import { withDatabase } from '@lib/read-store/mongo-read-store';

/**
 * The real engines named in this process's environment (`npm run test:engines` sets them), each
 * isolated per data directory: a MongoDB database and a Kafka topic prefix of its own, the same
 * again when a test restarts an app on the same directory.
 */
export function engineEnv(dataDir: string): Record<string, string> {
  const tag = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  const env: Record<string, string> = {};
  const { MONGODB_URL, KAFKA_BROKERS, EVENTSTORE_URL } = process.env;
  if (MONGODB_URL) env.MONGODB_URL = withDatabase(MONGODB_URL, `e2e_${tag}`);
  if (KAFKA_BROKERS) {
    env.KAFKA_BROKERS = KAFKA_BROKERS;
    env.KAFKA_TOPIC_PREFIX = `e2e-${tag}-`;
  }
  if (EVENTSTORE_URL) env.EVENTSTORE_URL = EVENTSTORE_URL;
  return env;
}
