// A Foxglove WebSocket client for bagscope's serve tests: Foxglove's own client library
// (@foxglove/ws-protocol's FoxgloveClient, as Lichtblick ships it) over the `ws` package,
// both fetched from npm at test time. It subscribes, optionally drives playback control, and
// prints what it saw as JSON lines.
//
// node foxglove_client.js URL SUBPROTOCOL OPTIONS_JSON
// OPTIONS: {
//   topics: [..] | null          subscribe to these topics (all when null)
//   idleMs: 1500                 end this long after the last message (once one came)
//   maxMs: 30000                 end after this long in any case
//   maxMessages: null            end after this many messages
//   actions: [{after: {messages: N} | {subscribed: true} | {ms: N},
//              request: {command: "play" | "pause", speed, seek: "ns", id}}]
//                                playback control requests, each once its trigger is met
//                                (ms: since the previous action)
//   noRead: false                subscribe, then stop reading the socket (a stalled client)
//   summary: false               no line a message: one "summary" line at the end (benchmarks)
//   schemaText: false            each channel's line carries its schema's text (not protobuf)
//   batch: null                  {size, gapMs}: subscribe `size` channels at a time, `gapMs` apart
//                                (a client whose burst of subscriptions is spread out)
// }
"use strict";
const { FoxgloveClient } = require("@foxglove/ws-protocol");
const WebSocket = require("ws");
const crypto = require("crypto");

const [url, subprotocol, optionsText] = process.argv.slice(2);
const opts = Object.assign(
  {
    topics: null,
    idleMs: 1500,
    maxMs: 30000,
    maxMessages: null,
    actions: [],
    noRead: false,
    summary: false,
    schemaText: false,
    batch: null,
  },
  JSON.parse(optionsText || "{}"),
);
const t0 = Date.now();
const out = (o) => process.stdout.write(JSON.stringify(Object.assign({ wall: Date.now() - t0 }, o)) + "\n");
const sha = (b) => crypto.createHash("sha256").update(b).digest("hex");

const ws = new WebSocket(url, [subprotocol]);
const client = new FoxgloveClient({ ws });
const channels = new Map();
const subs = new Map();
let count = 0;
let bytes = 0;
let firstWall = null;
let lastMessage = null;
let subscribed = false;
let actionIndex = 0;
let lastActionAt = Date.now();

let finishing = false;
function finish(code) {
  if (finishing) return;
  finishing = true;
  try {
    ws.terminate();
  } catch (e) {}
  // stdout is a pipe, written asynchronously: exit once everything written has gone out.
  if (opts.summary) {
    out({ kind: "summary", messages: count, bytes, firstWall, lastWall: lastMessage === null ? null : lastMessage - t0 });
  }
  process.stdout.write(JSON.stringify({ wall: Date.now() - t0, kind: "end", messages: count }) + "\n", () =>
    process.exit(code),
  );
}

function request(r) {
  const id = Buffer.from(r.id || "");
  const b = Buffer.alloc(1 + 1 + 4 + 1 + 8 + 4 + id.length);
  let o = 0;
  b.writeUInt8(0x03, o++);
  b.writeUInt8(r.command === "pause" ? 1 : 0, o++);
  b.writeFloatLE(r.speed ?? 1, o);
  o += 4;
  b.writeUInt8(r.seek != null ? 1 : 0, o++);
  b.writeBigUInt64LE(BigInt(r.seek ?? 0), o);
  o += 8;
  b.writeUInt32LE(id.length, o);
  o += 4;
  id.copy(b, o);
  ws.send(b);
  out({ kind: "request", command: r.command, speed: r.speed ?? 1, seek: r.seek ?? null, id: r.id || "" });
}

function runActions() {
  while (actionIndex < opts.actions.length) {
    const a = opts.actions[actionIndex];
    const t = a.after || {};
    const ready =
      (t.subscribed && subscribed) ||
      (t.messages != null && count >= t.messages) ||
      (t.ms != null && Date.now() - lastActionAt >= t.ms);
    if (!ready) return;
    actionIndex++;
    lastActionAt = Date.now();
    request(a.request);
  }
}
setInterval(runActions, 5);

// The protocol's playbackState (opcode 5), which FoxgloveClient does not know: read from the
// socket itself.
ws.on("message", (data, isBinary) => {
  if (!isBinary) return;
  const b = Buffer.from(data);
  if (b[0] !== 0x05) return;
  const n = b.readUInt32LE(15);
  out({
    kind: "state",
    status: b[1],
    time: b.readBigUInt64LE(2).toString(),
    speed: b.readFloatLE(10),
    didSeek: b[14] === 1,
    id: b.subarray(19, 19 + n).toString(),
  });
});

client.on("serverInfo", (info) => out({ kind: "serverInfo", info }));
client.on("status", (s) => out({ kind: "status", level: s.level, message: s.message }));
client.on("error", (e) => {
  // FoxgloveClient reports opcodes it does not know (playbackState) as errors.
  out({ kind: "error", message: String(e && e.message ? e.message : e) });
});
client.on("close", () => {
  out({ kind: "closed" });
  finish(0);
});
client.on("advertise", (list) => {
  for (const c of list) {
    channels.set(c.id, c);
    out({
      kind: "channel",
      id: c.id,
      topic: c.topic,
      encoding: c.encoding,
      schemaName: c.schemaName,
      schemaEncoding: c.schemaEncoding ?? "",
      schemaSha: sha(Buffer.from(c.schema, c.schemaEncoding === "protobuf" ? "base64" : "utf8")),
      ...(opts.schemaText && c.schemaEncoding !== "protobuf" ? { schema: c.schema } : {}),
    });
  }
  const wanted = list.filter((c) => opts.topics === null || opts.topics.includes(c.topic));
  const size = opts.batch ? opts.batch.size : wanted.length;
  const subscribeFrom = (i) => {
    for (const c of wanted.slice(i, i + size)) {
      subs.set(client.subscribe(c.id), c);
    }
    if (i + size < wanted.length) {
      setTimeout(() => subscribeFrom(i + size), opts.batch.gapMs);
      return;
    }
    subscribed = true;
    out({ kind: "subscribed", count: subs.size });
  };
  subscribeFrom(0);
  if (opts.noRead) {
    // Stop reading: the server's writes back up into its queue.
    setTimeout(() => ws._socket.pause(), 50);
  }
});
client.on("time", (t) => out({ kind: "time", time: t.timestamp.toString() }));
client.on("message", (m) => {
  if (finishing) return;
  const c = subs.get(m.subscriptionId);
  count++;
  lastMessage = Date.now();
  if (firstWall === null) firstWall = lastMessage - t0;
  bytes += m.data.byteLength;
  if (opts.summary) {
    if (opts.maxMessages != null && count >= opts.maxMessages) finish(0);
    return;
  }
  const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
  out({
    kind: "msg",
    topic: c ? c.topic : null,
    schemaName: c ? c.schemaName : null,
    time: m.timestamp.toString(),
    len: data.length,
    sha: sha(data),
  });
  if (opts.maxMessages != null && count >= opts.maxMessages) finish(0);
});
setInterval(() => {
  const now = Date.now();
  if (lastMessage !== null && now - lastMessage >= opts.idleMs && actionIndex >= opts.actions.length) finish(0);
  if (now - t0 >= opts.maxMs) finish(0);
}, 20);
