// The run form built from a program's input JSON Schema (`input_schema` in
// list_programs): one field per property for the simple shapes (text, number,
// yes/no, one of a list), and the plain JSON box for anything else. The
// dispatcher validates the input again; this only helps the user get it right.

const SIMPLE = new Set(["string", "number", "integer", "boolean"]);

/** True when every property of the schema can be a plain form field. */
export function formFits(schema) {
  if (!schema || schema.type !== "object" || typeof schema.properties !== "object") return false;
  return Object.values(schema.properties).every(
    (property) => Array.isArray(property.enum) || SIMPLE.has(property.type),
  );
}

/** Fills `container` with the fields of `schema`. */
export function renderFields(container, schema) {
  const required = new Set(schema.required ?? []);
  container.replaceChildren(
    ...Object.entries(schema.properties).map(([name, property]) => {
      const label = document.createElement("label");
      label.className = "input-field";
      const title = document.createElement("span");
      title.textContent = `${name}${required.has(name) ? " *" : ""}`;
      if (property.description) title.title = property.description;
      label.append(title, control(name, property, required.has(name)));
      return label;
    }),
  );
}

function control(name, property, isRequired) {
  let element;
  if (Array.isArray(property.enum)) {
    element = document.createElement("select");
    const options = isRequired ? property.enum : ["", ...property.enum];
    element.append(
      ...options.map((value) => {
        const option = document.createElement("option");
        option.value = value === "" ? "" : JSON.stringify(value);
        option.textContent = value === "" ? "(none)" : String(value);
        return option;
      }),
    );
    if ("default" in property) element.value = JSON.stringify(property.default);
  } else if (property.type === "boolean") {
    element = document.createElement("input");
    element.type = "checkbox";
    element.checked = property.default === true;
  } else {
    element = document.createElement("input");
    element.type = property.type === "string" ? "text" : "number";
    if (property.type === "integer") element.step = "1";
    if ("default" in property) element.placeholder = String(property.default);
    element.required = isRequired;
  }
  element.name = name;
  element.dataset.kind = Array.isArray(property.enum) ? "enum" : property.type;
  return element;
}

/** The input object the fields hold: empty optional fields are left out, so the schema's defaults apply. */
export function readFields(container) {
  const input = {};
  for (const element of container.querySelectorAll("[name]")) {
    const kind = element.dataset.kind;
    if (kind === "boolean") input[element.name] = element.checked;
    else if (element.value === "") continue;
    else if (kind === "enum") input[element.name] = JSON.parse(element.value);
    else if (kind === "number" || kind === "integer") input[element.name] = Number(element.value);
    else input[element.name] = element.value;
  }
  return input;
}
