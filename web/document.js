// The Panel document rendered from the worker: embed it with BokehJS and keep both in sync.

export function makeDocumentLink(worker) {
  let jsdoc = null;
  let busy = false;
  let queue = [];
  let applying = 0;

  function onChange(event) {
    if (applying > 0 || event.setter_id === "py") return;
    if (busy) {
      // Keep the order of everything the person did (a text edit must reach Python before
      // the click that follows it); only a run of changes to one attribute (a slider drag)
      // is folded into its newest value.
      const last = queue[queue.length - 1];
      if (last && event.model && event.attr && last.model === event.model && last.attr === event.attr) {
        queue[queue.length - 1] = event;
      } else {
        queue.push(event);
      }
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
      if (!queue.length) {
        busy = false;
        return;
      }
      // One patch a step, in order: a run of attribute changes together, any other event
      // (a button click) alone, so that each reaches Python after what came before it.
      const isChange = (e) => Boolean(e.model && e.attr);
      let n = 1;
      if (isChange(queue[0])) while (n < queue.length && isChange(queue[n])) n += 1;
      const batch = queue.splice(0, n);
      worker.postMessage({ type: "patch", patch: jsdoc.create_json_patch(batch) });
    },
  };
}
