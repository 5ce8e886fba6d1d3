// The palace worker's side of the embedding worker (embed.worker.js): start it, wait until
// its ONNX Runtime session is ready, send batches of token ids and get vectors back.
// Loaded with importScripts; defines the global OnnxEmbedding.
"use strict";

class OnnxEmbedding {
  // Start the embedding worker at once (it loads ONNX Runtime and the model while Pyodide
  // boots); `ready` resolves to {seconds, threads, bytes} or rejects with why it cannot run.
  constructor(threads) {
    this.calls = new Map();
    this.next = 0;
    this.info = null;
    this.ready = new Promise((resolve, reject) => {
      let worker;
      try {
        worker = new Worker(new URL("embed.worker.js", self.location.href), { type: "module" });
      } catch (err) {
        reject(err);
        return;
      }
      this.worker = worker;
      worker.onerror = (event) => {
        event.preventDefault?.();
        const why = new Error(event.message || "the embedding worker could not start");
        reject(why);
        this.failAll(why);
      };
      worker.onmessage = (event) => {
        const msg = event.data;
        if (msg.type === "ready") { this.info = msg; resolve(msg); }
        else if (msg.type === "failed") reject(new Error(msg.message));
        else if (msg.type === "vectors" || msg.type === "error") {
          const call = this.calls.get(msg.id);
          if (!call) return;
          this.calls.delete(msg.id);
          if (msg.type === "vectors") call.resolve(msg);
          else call.reject(new Error(msg.message));
        }
      };
      worker.postMessage({ type: "load", threads });
    });
    this.ready.catch(() => {});  // a caller that never asks must not see an unhandled rejection
  }

  failAll(err) {
    for (const call of this.calls.values()) call.reject(err);
    this.calls.clear();
  }

  // Resolve to {vectors: Float32Array(n·384), seconds} for an n×t batch of token ids.
  embed(ids, n, t) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.worker.postMessage({ type: "embed", id, ids, n, t });
    });
  }

  stop() {
    this.worker?.terminate();
    this.failAll(new Error("the embedding worker stopped"));
  }
}
