// The MCP TypeScript SDK's client, as mcp-remote drives it, given the server's MCP URL
// at a loopback address the server's base URL does not name (http://127.0.0.1:PORT
// when the base is http://localhost:PORT). Driven by TestMCPTypeScriptSDKAtLoopbackOrigin:
// it reports each step as a JSON line on stdout. It discovers the server from the
// 401 (the SDK refuses protected-resource metadata whose resource is not the URL it
// was given), registers and reports the authorize URL; it reads the code the person's
// approval produced from stdin, exchanges it and calls whoami.
//
// usage: INTERVIEWD_NODE_DIR=.ci/node node loopback_ts_client.cjs http://127.0.0.1:PORT/v1/mcp REDIRECT_URI
'use strict';
const path = require('node:path');
const readline = require('node:readline');
const { createRequire } = require('node:module');

const sdk = createRequire(path.resolve(process.env.INTERVIEWD_NODE_DIR, 'package.json'));
const { Client } = sdk('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdk('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError } = sdk('@modelcontextprotocol/sdk/client/auth.js');

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const lines = readline.createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once('line', resolve));

async function main() {
  const serverUrl = new URL(process.argv[2]);
  const redirectUrl = process.argv[3]; // nothing listens there: the test reads the code from the redirect
  const store = {};
  const provider = {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return { client_name: 'mcp-remote-like client', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'none' };
    },
    state() { return 'loopback-state'; },
    clientInformation() { return store.client; },
    saveClientInformation(info) { store.client = info; out({ event: 'registered', client_id: info.client_id }); },
    tokens() { return store.tokens; },
    saveTokens(tokens) { store.tokens = tokens; out({ event: 'tokens', access_prefix: tokens.access_token.slice(0, 5) }); },
    redirectToAuthorization(url) { out({ event: 'authorize', url: url.toString() }); },
    saveCodeVerifier(v) { store.verifier = v; },
    codeVerifier() { return store.verifier; },
  };

  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  try {
    await new Client({ name: 'interviewd-loopback-ts', version: '1' }).connect(transport);
    throw new Error('connected without authorization');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const code = (await nextLine()).trim();
  await transport.finishAuth(code);

  const client = new Client({ name: 'interviewd-loopback-ts', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
  const who = await client.callTool({ name: 'whoami', arguments: {} });
  out({ event: 'called', whoami: who.structuredContent });
  await client.close();
  lines.close();
  out({ event: 'done' });
}

main().catch((e) => { out({ event: 'error', message: String((e && e.stack) || e) }); process.exit(1); });
