import { Kafka, logLevel } from 'kafkajs';

/** Deletes the topics and consumer groups a test run made under its prefix on a shared broker. */
export async function deleteKafkaPrefix(brokers: string[], prefix: string): Promise<void> {
  const admin = new Kafka({ clientId: 'engine-spec-cleanup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
    const groups = (await admin.listGroups()).groups.map((group) => group.groupId).filter((id) => id.startsWith(prefix));
    // A group someone still belongs to stays; the broker expires it later.
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}
