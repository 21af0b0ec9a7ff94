/**
 * The one template rule of campaign messages (docs/API.md, Campaigns): every `{{name}}` is
 * replaced by the recipient's name, or removed when the recipient has none. Nothing else
 * in the text is special. Lengths are Unicode code points, as for every SMS.
 */
export const NAME_PLACEHOLDER = '{{name}}';

/** The message a recipient gets. */
export const renderCampaignMessage = (template: string, name: string | null): string =>
  template.replaceAll(NAME_PLACEHOLDER, name ?? '');

const codePoints = (s: string): number => [...s].length;

/**
 * Code points of the message rendered for a name of `nameLength` code points: what the API
 * checks against the SMS limit with the longest name among the recipients.
 */
export function renderedLength(template: string, nameLength: number): number {
  const parts = template.split(NAME_PLACEHOLDER);
  const placeholders = parts.length - 1;
  return parts.reduce((sum, p) => sum + codePoints(p), 0) + placeholders * nameLength;
}

/** True when the message rendered without a name is blank (nothing but whitespace). */
export const blankWithoutName = (template: string): boolean =>
  renderCampaignMessage(template, null).trim() === '';
