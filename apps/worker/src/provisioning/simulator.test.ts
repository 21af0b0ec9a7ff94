import { ProvisioningError } from './provider';
import { SimulatorProvisioningProvider, simulatedNumber } from './simulator';

describe('the provisioning simulator', () => {
  const sim = new SimulatorProvisioningProvider(1000);

  it('sells +1, the area code and 7 digits; the same key always gets the same number', async () => {
    const n = await sim.buyNumber({ key: 'rcp_a', areaCode: '415' });
    expect(n).toMatch(/^\+1415[2-9]\d{6}$/);
    expect(await sim.buyNumber({ key: 'rcp_a', areaCode: '415' })).toBe(n);
    expect(simulatedNumber('rcp_a', '415')).toBe(n);
    expect(sim.buyCallsFor('rcp_a')).toBe(2);
    expect(sim.numbersSoldFor('rcp_a')).toBe(1);
    expect(await sim.buyNumber({ key: 'rcp_b', areaCode: null })).toMatch(/^\+1[2-9]\d{9}$/);
  });

  it('has no numbers in area code 999 (permanent)', async () => {
    await expect(sim.buyNumber({ key: 'rcp_c', areaCode: '999' })).rejects.toMatchObject({
      code: 'number_unavailable',
      permanent: true,
    });
    expect(sim.numbersSoldFor('rcp_c')).toBe(0);
  });

  it('creates one assistant per key and fails as told', async () => {
    const req = { key: 'rcp_d', receptionistId: 'rcp_d', name: 'x', greeting: null, plan: 'pro' };
    const a = await sim.createAssistant({ ...req, phoneNumber: '+14155550100' });
    expect(a).toMatch(/^asst_[0-9a-f]{24}$/);
    expect(await sim.createAssistant({ ...req, phoneNumber: '+14155550100' })).toBe(a);
    const failing = new SimulatorProvisioningProvider(1000, (op) =>
      op === 'createAssistant' ? new ProvisioningError('busy', 'try later', false) : undefined,
    );
    await expect(failing.createAssistant({ ...req, phoneNumber: '+1' })).rejects.toMatchObject({
      code: 'busy',
      permanent: false,
    });
  });
});
