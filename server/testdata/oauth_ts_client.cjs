// The MCP TypeScript SDK's client with its own OAuth provider, against interviewd.
// Driven by TestOAuthMCPTypeScriptSDK: it reports each step as a JSON line on stdout
// and waits for a line on stdin before its last call. It discovers the authorization
// server from the 401, registers, sends the person to the authorize URL (the test
// opens it in Chromium), receives the code on its own loopback redirect URI,
// exchanges it, lists and calls tools, refreshes, and finally finds its connection
// ended and asks to authorize again.
//
// usage: INTERVIEWD_NODE_DIR=.ci/node node oauth_ts_client.cjs http://127.0.0.1:PORT/v1/mcp
'use strict';
const http = require('node:http');
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
  let gotCallback;
  const callback = new Promise((resolve) => { gotCallback = resolve; });
  const cb = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    if (u.pathname !== '/callback') { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Connected</title><h1 id="connected">Connected. You can close this window.</h1>');
    gotCallback(Object.fromEntries(u.searchParams));
  });
  await new Promise((resolve) => cb.listen(0, '127.0.0.1', resolve));
  const redirectUrl = `http://127.0.0.1:${cb.address().port}/callback`;

  const store = { authorizations: 0 };
  const provider = {
    get redirectUrl() { return redirectUrl; },
    get clientMetadata() {
      return { client_name: 'MCP TypeScript SDK', redirect_uris: [redirectUrl], grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'], token_endpoint_auth_method: 'none' };
    },
    state() { store.state = 'ts-' + Math.random().toString(36).slice(2); return store.state; },
    clientInformation() { return store.client; },
    saveClientInformation(info) { store.client = info; out({ event: 'registered', client_id: info.client_id }); },
    tokens() { return store.tokens; },
    saveTokens(tokens) {
      store.tokens = tokens;
      out({ event: 'tokens', access_prefix: tokens.access_token.slice(0, 5), refresh_prefix: (tokens.refresh_token || '').slice(0, 5),
        expires_in: tokens.expires_in, scope: tokens.scope });
    },
    redirectToAuthorization(url) {
      store.authorizations++;
      out({ event: store.authorizations === 1 ? 'authorize' : 'reauthorize', url: url.toString() });
    },
    saveCodeVerifier(v) { store.verifier = v; },
    codeVerifier() { return store.verifier; },
    invalidateCredentials(scope) {
      if (scope === 'all' || scope === 'tokens') delete store.tokens;
      if (scope === 'all' || scope === 'client') delete store.client;
      if (scope === 'all' || scope === 'verifier') delete store.verifier;
    },
  };
  const connect = async () => {
    const client = new Client({ name: 'interviewd-oauth-ts', version: '1' });
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
    await client.connect(transport);
    return { client, transport };
  };

  // 1. No token: the 401 names the resource metadata; the SDK registers and asks the
  // person to authorize.
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
  try {
    await new Client({ name: 'interviewd-oauth-ts', version: '1' }).connect(transport);
    throw new Error('connected without authorization');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const back = await callback;
  if (back.state !== store.state) throw new Error('state mismatch: ' + JSON.stringify(back));
  out({ event: 'callback', iss: back.iss, has_code: !!back.code });
  await transport.finishAuth(back.code);

  // 2. Connected: tools as the connection.
  const { client } = await connect();
  const tools = await client.listTools();
  const who = await client.callTool({ name: 'whoami', arguments: {} });
  out({ event: 'called', tools: tools.tools.map((t) => t.name), whoami: who.structuredContent });

  // 3. Refresh: a stale access token gets a 401, and the SDK spends its refresh token.
  const spent = store.tokens.refresh_token;
  store.tokens = { ...store.tokens, access_token: 'svca_stale' };
  const again = await client.callTool({ name: 'whoami', arguments: {} });
  out({ event: 'refreshed', rotated: store.tokens.refresh_token !== spent, whoami: again.structuredContent });

  // 4. The person ends the connection in the app; the next call is refused and the
  // SDK asks for authorization again instead of retrying.
  out({ event: 'waiting' });
  await nextLine();
  try {
    await client.callTool({ name: 'whoami', arguments: {} });
    out({ event: 'error', message: 'a call succeeded after the connection ended' });
  } catch (e) {
    out({ event: 'refused', unauthorized: e instanceof UnauthorizedError || /401|Unauthorized/i.test(String(e)) });
  }
  await client.close();
  cb.close();
  lines.close();
  out({ event: 'done' });
}

main().catch((e) => { out({ event: 'error', message: String((e && e.stack) || e) }); process.exit(1); });
