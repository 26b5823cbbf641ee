// The message composer of a chat (`dsh web`): the next user message.

import { $, post } from "./dom.js";

function grow(box) {
  box.style.height = "auto";
  box.style.height = Math.min(box.scrollHeight, 240) + "px";
}

function sendMessage(box, event) {
  if (event) event.preventDefault();
  const content = box.value;
  if (!content.trim()) return;
  const error = $("message-error");
  error.textContent = "";
  post("/api/message", { content }).then(() => {
    if (box.value === content) box.value = "";
    grow(box);
  }).catch((failure) => {
    error.textContent = `Not sent: ${failure.message}`;
  });
}

export function startMessages() {
  const form = $("message-form");
  const box = $("message");
  if (!form || !box) return;
  // The placeholder cannot wrap: a phone (390 px) cut the full one mid-word. The longest
  // of these that fits the box is shown, measured in the box's own font.
  const placeholders = [box.placeholder, "Message dsh…  (Enter sends)", "Message dsh…"];
  const measure = document.createElement("canvas").getContext("2d");
  const fitPlaceholder = () => {
    const style = getComputedStyle(box);
    const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (!measure || !(room > 0)) return;
    measure.font = style.font || `${style.fontSize} ${style.fontFamily}`;
    box.placeholder = placeholders.find((text) => measure.measureText(text).width <= room)
      || placeholders[placeholders.length - 1];
  };
  if (window.ResizeObserver) new ResizeObserver(fitPlaceholder).observe(box);
  form.addEventListener("submit", (event) => sendMessage(box, event));
  box.addEventListener("input", () => grow(box));
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing || event.keyCode === 229) return;
    sendMessage(box, event);
  });
}
