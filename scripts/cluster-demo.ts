import { startRedisCluster } from '../test/support/redis-cluster';

// A local Redis Cluster of three masters on free loopback ports, for trying the scale-out
// path (docs/SCALING.md, "Running on a Redis Cluster"). Runs until Ctrl-C, then stops every node and
// removes its files. Needs redis-server and redis-cli (Redis 7+).
//
//   npm run cluster:demo
async function main(): Promise<void> {
  process.stderr.write('switchboard: starting a Redis Cluster of 3 masters...\n');
  const cluster = await startRedisCluster({ masters: 3 });
  const ports = cluster.nodes.map((n) => n.port).join(', ');
  process.stdout.write(
    [
      `Redis Cluster ready on 127.0.0.1 ports ${ports} (every slot served).`,
      'In another terminal, run Switchboard on it (REDIS_URL must be empty or unset):',
      '',
      `  REDIS_URL= REDIS_CLUSTER_NODES=${cluster.seeds} npm start`,
      '',
      'Ctrl-C stops the cluster and removes its files.',
      '',
    ].join('\n'),
  );
  const stop = () => {
    void cluster.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`switchboard: ${(err as Error).message}\n`);
  process.exit(1);
});
