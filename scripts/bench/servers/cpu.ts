/**
 * The bench's servers run as forked children: they announce themselves once ready, answer `cpu`
 * with their own process.cpuUsage() (user + system, µs), and stop on `stop`.
 */
export function serveCpuUsage(ready: Record<string, unknown>, onMessage?: (message: any) => void): void {
  process.on('message', (message: any) => {
    if (message?.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ type: 'cpu', micros: user + system });
    } else if (message?.type === 'stop') {
      process.exit(0);
    } else {
      onMessage?.(message);
    }
  });
  process.send!({ type: 'ready', ...ready });
}
