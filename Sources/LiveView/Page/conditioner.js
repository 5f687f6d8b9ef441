// The link conditioner panel, after Apple's Network Link Conditioner: an on/off switch and a list of profiles.
// The server applies them through the same library code as `condition`; the page only asks and shows the
// state the server answers with. Changing an interface (not the command's own sandbox) needs a confirmation.

import { getJSON, postJSON } from "./api.js";
import { element } from "./format.js";

export class ConditionerPanel {
  constructor({ panel, dialog, dialogText, sourceName, onState }) {
    Object.assign(this, { panel, dialog, dialogText, sourceName, onState });
    this.state = null;
    this.chosen = null;
    this.busy = false;
    this.error = null;
  }

  async load() {
    try { this.update(await getJSON("api/conditioner")); } catch (error) {
      this.state = { available: false, reason: `the server did not answer: ${error.message}`, profiles: [], switches: [] };
      this.render();
    }
  }

  update(state) {
    this.state = state;
    if (state.active != null) this.chosen = state.active;
    if (this.chosen == null && state.profiles?.length) this.chosen = state.profiles[0].name;
    this.render();
    this.onState(state);
  }

  targetText() {
    const state = this.state;
    if (state.target === "sandbox") return "Applies to the command's sandbox only.";
    if (state.target === "interface") return `Applies to interface ${this.sourceName()}: every program using it.`;
    return "";
  }

  render() {
    const state = this.state;
    const heading = element("h2", null, "Link conditioner");
    const on = state.available && state.active != null;
    const toggle = element("input", "switch");
    toggle.type = "checkbox";
    toggle.id = "conditioner-switch";
    toggle.setAttribute("role", "switch");
    toggle.checked = on;
    toggle.disabled = !state.available || this.busy;
    const label = element("label", "switch-label", on ? `On: ${state.active}` : "Off");
    label.htmlFor = toggle.id;
    toggle.addEventListener("change", () => this.apply(toggle.checked ? this.chosen : null));
    const top = element("div", "switch-row");
    top.append(toggle, label);
    const parts = [heading, top];
    if (!state.available) {
      parts.push(element("p", "unavailable", `Unavailable because ${state.reason ?? "the server gave no reason"}.`));
    } else parts.push(element("p", "target", this.targetText()));
    const list = element("ul", "profiles");
    for (const profile of state.profiles ?? []) {
      const item = element("li", profile.name === state.active ? "profile active" : "profile");
      const radio = element("input");
      radio.type = "radio";
      radio.name = "profile";
      radio.value = profile.name;
      radio.id = `profile-${(state.profiles.indexOf(profile))}`;
      radio.checked = profile.name === this.chosen;
      radio.disabled = !state.available || this.busy;
      radio.addEventListener("change", () => {
        this.chosen = profile.name;
        if (this.state.active != null) this.apply(profile.name); else this.render();
      });
      const text = element("label");
      text.htmlFor = radio.id;
      text.append(element("span", "name", profile.name), element("span", "summary", profile.summary ?? ""));
      if (profile.source && profile.source !== "built-in") text.append(element("span", "origin", profile.source));
      item.append(radio, text);
      list.append(item);
    }
    parts.push(list);
    if (this.error) parts.push(element("p", "error", this.error));
    this.panel.replaceChildren(...parts);
  }

  confirm(profile) {
    return new Promise((resolve) => {
      this.dialogText.textContent = `Apply "${profile}" to interface ${this.sourceName()}? This changes the network of every `
        + "program using the interface until it is switched off here (or the auto-revert ends it).";
      this.dialog.addEventListener("close", () => resolve(this.dialog.returnValue === "ok"), { once: true });
      this.dialog.returnValue = "";
      this.dialog.showModal();
    });
  }

  async apply(profile) {
    let confirmed = false;
    if (profile != null && this.state.needsConfirmation) {
      confirmed = await this.confirm(profile);
      if (!confirmed) { this.chosen = this.state.active ?? this.chosen; this.render(); return; }
    }
    this.busy = true;
    this.error = null;
    this.render();
    try {
      const state = await postJSON("api/conditioner", { profile, confirm: confirmed });
      this.busy = false;
      this.update(state);
    } catch (error) {
      this.busy = false;
      this.error = `Not applied: ${error.message}`;
      await this.load();
    }
  }
}
