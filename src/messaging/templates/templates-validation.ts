/**
 * The rules of a template that a JSON schema cannot say, checked before anything reaches the
 * provider (Graph documents them; it would refuse the template otherwise, after a round trip):
 * exactly one BODY, at most one HEADER, FOOTER and BUTTONS; the body's text (≤ 1,024
 * characters) unless it is an AUTHENTICATION template; a text HEADER (≤ 60) with at most one
 * variable; a FOOTER's text (≤ 60) without variables; variables `{{n}}` numbered 1, 2, … with
 * no gap, each with an example value.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates/components
 */
import type { ErrorDetail } from '../../platform/errors.ts';
import {
  TEMPLATE_FOOTER_MAX,
  TEMPLATE_HEADER_TEXT_MAX,
  type NewTemplateBody,
} from './templates-schemas.ts';

const VARIABLE = /\{\{\s*(\d+)\s*\}\}/g;

/** The variable numbers of a text, in order of appearance (duplicates kept). */
export function templateVariables(text: string): number[] {
  return [...text.matchAll(VARIABLE)].map((m) => Number(m[1]));
}

/** Distinct variables must be exactly 1..k. @returns k, or an error message. */
function consecutive(text: string): number | string {
  const distinct = [...new Set(templateVariables(text))].sort((a, b) => a - b);
  for (let i = 0; i < distinct.length; i++)
    if (distinct[i] !== i + 1)
      return `variables must be numbered {{1}}, {{2}}, … without a gap (found {{${distinct[i]}}})`;
  return distinct.length;
}

/**
 * The Graph rules over a template that passed the schema.
 *
 * @returns one detail per broken rule (empty when the template may be submitted); `field` is
 *   the JSON path from the body, e.g. `body.components[1].text`.
 */
export function templateRuleErrors(t: NewTemplateBody): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const counts = new Map<string, number>();
  for (const c of t.components) counts.set(c.type, (counts.get(c.type) ?? 0) + 1);
  if ((counts.get('BODY') ?? 0) !== 1)
    errors.push({ field: 'body.components', message: 'must have exactly one BODY component' });
  for (const type of ['HEADER', 'FOOTER', 'BUTTONS'])
    if ((counts.get(type) ?? 0) > 1)
      errors.push({ field: 'body.components', message: `must have at most one ${type} component` });

  t.components.forEach((c, i) => {
    const at = (key: string) => `body.components[${i}]${key}`;
    if (c.type !== 'HEADER' && c.format !== undefined)
      errors.push({ field: at('.format'), message: 'is allowed on a HEADER only' });
    if (c.type !== 'BUTTONS' && c.buttons !== undefined)
      errors.push({ field: at('.buttons'), message: 'is allowed on a BUTTONS component only' });
    if (c.type === 'BUTTONS' && !c.buttons)
      errors.push({ field: at('.buttons'), message: 'is required on a BUTTONS component' });
    if (c.type === 'BODY') errors.push(...bodyErrors(t, c, at));
    if (c.type === 'HEADER') errors.push(...headerErrors(c, at));
    if (c.type === 'FOOTER') {
      if (!c.text) errors.push({ field: at('.text'), message: 'is required on a FOOTER' });
      else if (c.text.length > TEMPLATE_FOOTER_MAX)
        errors.push({
          field: at('.text'),
          message: `must be at most ${TEMPLATE_FOOTER_MAX} characters`,
        });
      else if (templateVariables(c.text).length > 0)
        errors.push({ field: at('.text'), message: 'must not contain variables' });
    }
  });
  return errors;
}

type Component = NewTemplateBody['components'][number];

function bodyErrors(t: NewTemplateBody, c: Component, at: (k: string) => string): ErrorDetail[] {
  if (c.text === undefined)
    return t.category === 'AUTHENTICATION'
      ? []
      : [{ field: at('.text'), message: 'is required on the BODY' }];
  const k = consecutive(c.text);
  if (typeof k === 'string') return [{ field: at('.text'), message: k }];
  if (k === 0) return [];
  const examples = c.example?.body_text?.[0];
  if (!examples)
    return [
      {
        field: at('.example.body_text'),
        message: `must give an example for each of the ${k} variables`,
      },
    ];
  if (examples.length !== k)
    return [
      {
        field: at('.example.body_text[0]'),
        message: `must have ${k} example values (one per variable), not ${examples.length}`,
      },
    ];
  return [];
}

function headerErrors(c: Component, at: (k: string) => string): ErrorDetail[] {
  const format = c.format ?? 'TEXT';
  if (format !== 'TEXT')
    return c.text === undefined
      ? []
      : [{ field: at('.text'), message: `is not allowed with format ${String(format)}` }];
  if (!c.text) return [{ field: at('.text'), message: 'is required on a TEXT header' }];
  if (c.text.length > TEMPLATE_HEADER_TEXT_MAX)
    return [
      { field: at('.text'), message: `must be at most ${TEMPLATE_HEADER_TEXT_MAX} characters` },
    ];
  const k = consecutive(c.text);
  if (typeof k === 'string') return [{ field: at('.text'), message: k }];
  if (k > 1) return [{ field: at('.text'), message: 'may have at most one variable, {{1}}' }];
  if (k === 1 && c.example?.header_text?.length !== 1)
    return [{ field: at('.example.header_text'), message: 'must give an example for {{1}}' }];
  return [];
}
