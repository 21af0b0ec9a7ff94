import { createServer, connect, type Socket } from 'node:net';
import { withinMs } from './connection';

/** A connected loopback pair: [the client's end, the server's end]. */
async function socketPair(): Promise<[Socket, Socket, () => void]> {
  const server = createServer();
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  const peer = await accepted;
  return [client, peer, () => (client.destroy(), peer.destroy(), server.close())];
}

const busyFor = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('withinMs', () => {
  it('takes an answer that arrived while this process was stalled past the deadline', async () => {
    const [client, peer, close] = await socketPair();
    const answer = new Promise<string>((r) => client.once('data', (b) => r(String(b))));
    try {
      const result = withinMs(20, answer, 'echo');
      peer.write('pong'); // in the client's socket now; read only when the loop polls
      busyFor(60); // the deadline passes while the answer waits to be read
      await expect(result).resolves.toBe('pong');
    } finally {
      close();
    }
  });

  it('runs a thenable once (a knex query runs again at each call of its then)', async () => {
    let runs = 0;
    const query: PromiseLike<string> = {
      then: (ok, fail) => {
        runs += 1;
        return Promise.resolve('row').then(ok, fail);
      },
    };
    await expect(withinMs(1000, query, 'query')).resolves.toBe('row');
    expect(runs).toBe(1);
  });

  it('refuses when no answer comes', async () => {
    const [client, , close] = await socketPair();
    const answer = new Promise<string>((r) => client.once('data', (b) => r(String(b))));
    try {
      await expect(withinMs(20, answer, 'echo')).rejects.toThrow('echo: no answer within 20 ms');
    } finally {
      close();
    }
  });
});
