// kafkajs over SASL_SSL with SCRAM, and @kafkajs/confluent-schema-registry with HTTP basic credentials:
// registers an Avro schema as the user, produces records in the Confluent wire format over TLS + SCRAM,
// consumes them back in a group and decodes them. Then a wrong password must be refused by both.
// Usage: node sasl-roundtrip.js <bootstrap> <caPemFile> <mechanism> <user> <password> <registryUrl> <topic> <count>
// (mechanism as kafkajs names it: scram-sha-256, scram-sha-512 or plain)
// Prints one JSON line: {"id": <schema id>, "decoded": [...], "wrongPassword": "<kafkajs error>",
// "registryWithoutCredentials": <HTTP status>}; exits non-zero on any other failure.
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const [bootstrap, caFile, mechanism, username, password, registryUrl, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);
const ssl = { ca: [fs.readFileSync(caFile, 'utf8')] };

function kafkaAs(secret) {
  return new Kafka({
    clientId: 'kafkajs-sasl', brokers: [bootstrap], logLevel: logLevel.NOTHING, ssl,
    sasl: { mechanism, username, password: secret }, retry: { retries: 2 }, connectionTimeout: 10000,
  });
}

async function main() {
  const registry = new SchemaRegistry({ host: registryUrl, auth: { username, password } });
  const schema = {
    type: 'record', name: 'Payment', namespace: 'io.tidemark.test',
    fields: [{ name: 'user', type: 'string' }, { name: 'seq', type: 'int' }],
  };
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${topic}-value` });

  const kafka = kafkaAs(password);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ key: `u${i}`, value: await registry.encode(id, { user: `u${i}`, seq: i }) });
  }
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `kafkajs-sasl-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const decoded = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${decoded.length} of ${count} records consumed in 60 s`)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        decoded.push(await registry.decode(message.value));
        if (decoded.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();

  let wrongPassword = null;
  const wrong = kafkaAs(`${password}-wrong`).admin();
  try {
    await wrong.connect();
    await wrong.listTopics();
  } catch (e) {
    wrongPassword = `${e.name}: ${e.message}`;
  } finally {
    await wrong.disconnect().catch(() => {});
  }
  const anonymous = await fetch(`${registryUrl}/subjects`);
  console.log(JSON.stringify({ id, decoded, wrongPassword, registryWithoutCredentials: anonymous.status }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
