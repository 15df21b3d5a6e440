// @ts-check
// The run form built from a program's input JSON Schema (`input_schema` in
// list_programs): one field per property for the simple shapes (text, number,
// yes/no, one of a list), and the plain JSON box for anything else. The
// dispatcher validates the input again; this only helps the user get it right.
// Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {NonNullable<import("../src/protocol.js").ProgramInfo["input_schema"]>} InputSchema */
/**
 * A property of the input's schema, as far as a form field reads it.
 * @typedef {{ type?: string, enum?: unknown[], description?: string, default?: unknown }} FieldSchema
 */
/** @typedef {HTMLInputElement | HTMLSelectElement} FieldElement */

/**
 * The schema's properties, each as a form field reads it.
 * @param {InputSchema} schema
 * @returns {Record<string, FieldSchema>}
 */
function propertiesOf(schema) {
  return /** @type {Record<string, FieldSchema>} */ (schema.properties);
}

const SIMPLE = new Set(["string", "number", "integer", "boolean"]);

/**
 * True when every property of the schema can be a plain form field.
 * @param {InputSchema | null | undefined} schema
 * @returns {schema is InputSchema}
 */
export function formFits(schema) {
  if (!schema || schema.type !== "object" || typeof schema.properties !== "object") return false;
  return Object.values(propertiesOf(schema)).every(
    (property) => Array.isArray(property.enum) || SIMPLE.has(/** @type {string} */ (property.type)),
  );
}

/**
 * Fills `container` with the fields of `schema`.
 * @param {HTMLElement} container
 * @param {InputSchema} schema
 */
export function renderFields(container, schema) {
  const required = new Set(/** @type {string[]} */ (schema.required ?? []));
  container.replaceChildren(
    ...Object.entries(propertiesOf(schema)).map(([name, property]) => {
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

/**
 * @param {string} name
 * @param {FieldSchema} property
 * @param {boolean} isRequired
 * @returns {FieldElement}
 */
function control(name, property, isRequired) {
  /** @type {FieldElement} */
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

/**
 * The input object the fields hold: empty optional fields are left out, so the schema's defaults apply.
 * @param {ParentNode} container
 * @returns {Record<string, unknown>}
 */
export function readFields(container) {
  /** @type {Record<string, unknown>} */
  const input = {};
  for (const element of /** @type {NodeListOf<FieldElement>} */ (container.querySelectorAll("[name]"))) {
    const kind = element.dataset.kind;
    // A yes/no field is a checkbox.
    if (kind === "boolean") input[element.name] = /** @type {HTMLInputElement} */ (element).checked;
    else if (element.value === "") continue;
    else if (kind === "enum") input[element.name] = JSON.parse(element.value);
    else if (kind === "number" || kind === "integer") input[element.name] = Number(element.value);
    else input[element.name] = element.value;
  }
  return input;
}
