// An agent built on the A2A JavaScript SDK (@a2a-js/sdk, pinned in .ci/node): it reads
// interviewd's agent card, sends a message naming a skill, reads the task back with
// GetTask and prints what it saw as one JSON line. Driven by server/a2a_javascript_test.go.
//
// usage: node a2a_js_client.cjs NODE_DIR BASE_URL SERVER_URL API_KEY STUDY_ID
'use strict';
const path = require('node:path');
const { createRequire } = require('node:module');

const [nodeDir, baseURL, serverURL, apiKey, studyID] = process.argv.slice(2);
const sdkRequire = createRequire(path.join(nodeDir, 'package.json'));
const client = sdkRequire('@a2a-js/sdk/client');
const { Role, TaskState } = sdkRequire('@a2a-js/sdk');

// The agent card names the configured base URL; the test server listens elsewhere on
// loopback, so requests for the one go to the other, with the API key as a bearer.
const fetchImpl = (url, init) => {
  const target = String(url).replace(baseURL, serverURL);
  const headers = new Headers(init && init.headers);
  headers.set('Authorization', 'Bearer ' + apiKey);
  return fetch(target, { ...init, headers });
};

async function main() {
  const factory = new client.ClientFactory(client.ClientFactoryOptions.createFrom(client.ClientFactoryOptions.default, {
    transports: [new client.JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new client.DefaultAgentCardResolver({ fetchImpl }),
  }));
  const agent = await factory.createFromUrl(baseURL);
  const sent = await agent.sendMessage({
    message: {
      messageId: 'js-' + Date.now(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'data', value: { skill: 'get_study', arguments: { study_id: studyID } } } }],
    },
  });
  const read = await agent.getTask({ id: sent.id });
  const result = (read.artifacts || []).find((a) => a.artifactId === 'result');
  const data = result && result.parts[0].content && result.parts[0].content.value;
  console.log(JSON.stringify({
    sent_id: sent.id,
    read_id: read.id,
    state: TaskState[read.status.state],
    study_id: data && data.id,
    study_name: data && data.name,
  }));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
});
