// window.palazzo.call(name, args): one palace operation, run in the worker.

export class PalaceError extends Error {
  constructor(error) {
    super(error.message);
    this.name = "PalaceError";
    this.code = error.code;
    this.type = error.type;
    this.detail = error;
  }
}

export function makeClient(worker) {
  let nextId = 1;
  const waiting = new Map();
  return {
    call(name, args = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ type: "call", id, name, args });
      });
    },
    settle(reply) {
      const entry = waiting.get(reply.id);
      if (!entry) return;
      waiting.delete(reply.id);
      if (reply.ok) entry.resolve(reply.result);
      else entry.reject(new PalaceError(reply.error));
    },
    failAll(error) {
      for (const entry of waiting.values()) entry.reject(new PalaceError(error));
      waiting.clear();
    },
  };
}
