// The Panel document rendered from the worker: embed it with BokehJS and keep both in sync.

export function makeDocumentLink(worker) {
  let jsdoc = null;
  let busy = false;
  let queue = [];
  let applying = 0;

  function onChange(event) {
    if (applying > 0 || event.setter_id === "py") return;
    if (busy && event.model && event.attr) {
      // Keep only the newest value of each model attribute while the worker is busy.
      queue = queue.filter((e) => !(e.model === event.model && e.attr === event.attr));
      queue.push(event);
      return;
    }
    busy = true;
    worker.postMessage({ type: "patch", patch: jsdoc.create_json_patch([event]) });
  }

  return {
    async render(msg, element) {
      const docs = JSON.parse(msg.docs_json);
      const items = JSON.parse(msg.render_items);
      // One element a root: the layout, plus Panel's invisible roots (location, state).
      element.replaceChildren();
      for (const rootId of JSON.parse(msg.root_ids)) {
        const holder = document.createElement("div");
        holder.id = items[0].roots[rootId];
        element.append(holder);
      }
      const [views] = await window.Bokeh.embed.embed_items(docs, items);
      jsdoc = [...views.roots.values()][0].model.document;
      jsdoc.on_change(onChange, false);
      worker.postMessage({ type: "rendered" });
    },
    applyPatch(msg) {
      applying += 1;
      try {
        jsdoc.apply_json_patch(msg.patch, msg.buffers);
      } finally {
        applying -= 1;
      }
    },
    idle() {
      if (queue.length) {
        const patch = jsdoc.create_json_patch(queue);
        queue = [];
        worker.postMessage({ type: "patch", patch });
      } else {
        busy = false;
      }
    },
  };
}
