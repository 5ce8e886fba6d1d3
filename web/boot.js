// Boot progress: which stage the worker is in, how long each took, and failures in words.

const stageTimes = {};
// What the worker said of each stage, by "stage:state" (e.g. the bytes of loaded libraries it
// let go when the packages were in).
const stageDetails = {};

export function showStage(msg, origin) {
  const li = document.querySelector(`#boot-stages li[data-stage="${msg.stage}"]`);
  stageTimes[`${msg.stage}:${msg.state}`] = msg.at - origin;
  if (msg.detail) stageDetails[`${msg.stage}:${msg.state}`] = msg.detail;
  if (!li) return;
  li.classList.remove("active");
  li.classList.add(msg.state === "start" ? "active" : "done");
  if (msg.state === "done") {
    const span = document.createElement("span");
    span.className = "elapsed";
    span.textContent = `${((msg.at - origin) / 1000).toFixed(1)} s`;
    li.append(span);
  }
}

export function showError(msg) {
  const li = document.querySelector(`#boot-stages li[data-stage="${msg.stage}"]`);
  if (li) li.classList.replace("active", "failed") || li.classList.add("failed");
  const box = document.getElementById("boot-error");
  box.hidden = false;
  box.textContent = `Could not start (${msg.stage}): ${msg.message}`;
}

export function hideBoot() {
  document.getElementById("boot").hidden = true;
  document.getElementById("app").hidden = false;
}

export { stageDetails, stageTimes };
