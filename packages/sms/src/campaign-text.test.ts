import { blankWithoutName, renderCampaignMessage, renderedLength } from './campaign-text';

describe('campaign message template', () => {
  it('replaces every {{name}}, or removes it when there is no name', () => {
    expect(renderCampaignMessage('Hi {{name}}! Bye {{name}}.', 'Dana')).toBe('Hi Dana! Bye Dana.');
    expect(renderCampaignMessage('Hi {{name}}, see you', null)).toBe('Hi , see you');
    expect(renderCampaignMessage('Hi {{ name }} {name}', 'Dana')).toBe('Hi {{ name }} {name}');
  });

  it('computes the rendered length in code points', () => {
    const template = 'Hi {{name}} 👋, {{name}}';
    for (const name of ['', 'Dana', 'Zoë 😀', 'x'.repeat(200)]) {
      expect(renderedLength(template, [...name].length)).toBe(
        [...renderCampaignMessage(template, name)].length,
      );
    }
  });

  it('tells a message that is blank without a name', () => {
    expect(blankWithoutName(' {{name}} ')).toBe(true);
    expect(blankWithoutName('Hi {{name}}')).toBe(false);
  });
});
