// Registers an Avro schema in Tidemark's registry with @kafkajs/confluent-schema-registry, produces
// records in the Confluent wire format with kafkajs, consumes them back in a group and decodes them.
// Usage: node avro-roundtrip.js <bootstrap> <registryUrl> <topic> <count>
// Prints one JSON line: {"id": <schema id>, "decoded": [...]}; exits non-zero on any failure.
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const [bootstrap, registryUrl, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);

async function main() {
  const registry = new SchemaRegistry({ host: registryUrl });
  const schema = {
    type: 'record', name: 'Click', namespace: 'io.tidemark.test',
    fields: [
      { name: 'user', type: 'string' },
      { name: 'page', type: 'string' },
      { name: 'seq', type: 'int' },
    ],
  };
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${topic}-value` });

  const kafka = new Kafka({ clientId: 'kafkajs-e2e', brokers: [bootstrap], logLevel: logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();

  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ key: `u${i}`, value: await registry.encode(id, { user: `u${i}`, page: `/p/${i}`, seq: i }) });
  }
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `kafkajs-e2e-${topic}` });
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
  console.log(JSON.stringify({ id, decoded }));
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
