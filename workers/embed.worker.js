// The embedding worker: runs all-MiniLM-L6-v2 (the site's vendor/models/minilm/minilm.onnx)
// with ONNX Runtime Web (vendor/ort/, wasm SIMD), beside the palace worker that started it.
// The palace worker tokenises in Python and sends padded batches of token ids; this worker
// answers with unit sentence vectors. Threads are used only when the page is cross-origin
// isolated and the palace worker asks for them; a plain static host runs one thread.
// Messages in:  {type: "load", threads}, {type: "embed", id, ids: Int32Array, n, t}
// Messages out: {type: "ready", seconds, threads, bytes}, {type: "failed", message},
//               {type: "vectors", id, vectors: Float32Array, seconds} | {type: "error", id, message}
import * as ort from "../vendor/ort/ort.wasm.min.mjs";

const SITE = new URL("../", import.meta.url);
let session = null;

async function load(threads) {
  const t0 = performance.now();
  ort.env.wasm.wasmPaths = new URL("vendor/ort/", SITE).href;
  ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.max(1, threads | 0) : 1;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
  const card = await (await fetch(new URL("vendor/models/minilm/minilm.json", SITE))).json();
  const response = await fetch(new URL(`vendor/models/minilm/${card.onnx.file}`, SITE));
  if (!response.ok) throw new Error(`${card.onnx.file}: HTTP ${response.status}`);
  const model = new Uint8Array(await response.arrayBuffer());
  session = await ort.InferenceSession.create(model, {
    executionProviders: ["wasm"],
    graphOptimizationLevel: "all",
  });
  // One tiny run: the first run allocates; the first real batch should not pay for it.
  await run(new Int32Array([101, 102]), 1, 2);
  return { seconds: (performance.now() - t0) / 1000, threads: ort.env.wasm.numThreads,
    bytes: model.byteLength };
}

async function run(ids, n, t) {
  const size = n * t;
  const input = new BigInt64Array(size);
  const mask = new BigInt64Array(size);
  for (let i = 0; i < size; i++) {
    input[i] = BigInt(ids[i]);
    mask[i] = ids[i] === 0 ? 0n : 1n;
  }
  const out = await session.run({
    input_ids: new ort.Tensor("int64", input, [n, t]),
    attention_mask: new ort.Tensor("int64", mask, [n, t]),
  });
  const tensor = out.sentence_embedding;
  const vectors = new Float32Array(tensor.data);
  tensor.dispose?.();
  return vectors;
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "load") {
    try {
      self.postMessage({ type: "ready", ...(await load(msg.threads)) });
    } catch (err) {
      self.postMessage({ type: "failed", message: String(err && err.message ? err.message : err) });
    }
  } else if (msg.type === "embed") {
    try {
      const t0 = performance.now();
      const vectors = await run(msg.ids, msg.n, msg.t);
      self.postMessage({ type: "vectors", id: msg.id, vectors, seconds: (performance.now() - t0) / 1000 },
        [vectors.buffer]);
    } catch (err) {
      self.postMessage({ type: "error", id: msg.id, message: String(err && err.message ? err.message : err) });
    }
  }
};
