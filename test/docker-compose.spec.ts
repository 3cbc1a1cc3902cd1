import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { EventStoreDbEventStore } from '@lib/event-store/eventstoredb-event-store';
import { loadConfig } from '@lib/shared';

/**
 * Docker is not available where the tests run, so `docker compose up` is not exercised here.
 * These checks hold the file to what the product needs: it parses, every service reports its
 * health, the apps start only on healthy engines and reach all three of them.
 */
const root = join(__dirname, '..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string }>;
}

function loadCompose(): { services: Record<string, Service> } {
  const document = parseDocument(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
  expect(document.errors).toEqual([]);
  expect(document.warnings).toEqual([]);
  return document.toJS() as { services: Record<string, Service> };
}

const engines = ['eventstore', 'mongodb', 'kafka'];
const apps = ['api-gateway', 'projector', 'outbox'];

describe('docker-compose.yml', () => {
  const { services } = loadCompose();

  it('runs the three engines and the three apps', () => {
    expect(Object.keys(services).sort()).toEqual([...engines, ...apps].sort());
    expect(services.eventstore.image).toMatch(/^eventstore\/eventstore:24\.10/);
    expect(services.mongodb.image).toMatch(/^mongo:/);
    expect(services.kafka.image).toMatch(/^apache\/kafka:3\.9\./);
  });

  it('gives every service a health check', () => {
    const checked = Object.entries(services).map(([name, service]) => [name, (service.healthcheck?.test?.length ?? 0) > 1]);
    expect(checked).toEqual(Object.keys(services).map((name) => [name, true]));
  });

  it('starts each app on healthy engines only, and every dependency has a health check', () => {
    for (const name of apps) {
      const dependsOn = services[name].depends_on ?? {};
      for (const engine of engines) expect({ name, engine, condition: dependsOn[engine]?.condition }).toEqual({ name, engine, condition: 'service_healthy' });
      for (const [dependency, { condition }] of Object.entries(dependsOn)) {
        expect(condition).toBe('service_healthy');
        expect(services[dependency]?.healthcheck).toBeDefined();
      }
    }
  });

  it('points every app at the three engines of this file, with settings the config accepts', () => {
    for (const name of apps) {
      const env = Object.fromEntries(Object.entries(services[name].environment ?? {}).map(([key, value]) => [key, String(value)]));
      expect(env.EVENTSTORE_URL).toMatch(/^esdb:\/\/eventstore:2113\b/);
      expect(env.MONGODB_URL).toMatch(/^mongodb:\/\/mongodb:27017\//);
      expect(env.KAFKA_BROKERS).toBe('kafka:9092');
      // The compose-only ${VAR:-} defaults interpolate to empty strings, which the config reads as unset.
      const interpolated = Object.fromEntries(Object.entries(env).map(([key, value]) => [key, value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));
      const config = loadConfig(interpolated);
      expect(config).toMatchObject({ eventStoreUrl: env.EVENTSTORE_URL, mongodbUrl: env.MONGODB_URL, kafkaBrokers: ['kafka:9092'], host: '0.0.0.0' });
      expect(() => EventStoreDbEventStore.connect({ url: env.EVENTSTORE_URL })).not.toThrow();
    }
  });

  it('starts each app from a file the build produces, the gateway alone, and checks the port it serves', () => {
    const entry = (service: Service) => service.command!.find((part) => part.startsWith('dist/'))!;
    for (const name of apps) {
      const source = entry(services[name]).replace(/^dist\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(join(root, source))).toBe(true);
    }
    expect(services['api-gateway'].command).toContain('--only-gateway');
    expect(services['api-gateway'].healthcheck!.test!.join(' ')).toContain('127.0.0.1:3000/readyz');
    for (const name of ['projector', 'outbox']) {
      expect(services[name].environment!.OPS_PORT).toBe(9000);
      expect(services[name].healthcheck!.test!.join(' ')).toContain('127.0.0.1:9000/readyz');
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('builds with npm ci and npm run build on Node 20, and runs the result as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages.every((stage) => stage.startsWith('node:20'))).toBe(true);
    expect(stages[0]).toMatch(/^RUN npm ci$/m);
    expect(stages[0]).toMatch(/npm run build/);
    const final = stages[stages.length - 1];
    expect(final).toMatch(/^USER (?!root\b|0\b)\S+/m);
    expect(final).toMatch(/COPY --from=\w+ .*\/app\/dist dist/);
  });

  it('keeps dependencies and build output of the host out of the build context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'data']));
  });
});
