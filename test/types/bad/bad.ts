// Must NOT compile: proves that the declarations constrain callers (see test/api/api.test.js).
import * as ixy from '../../..';

async function misuse(): Promise<void> {
  const dev = await ixy.open('0000:03:00.0', { rxRingSize: '512' });
  const n: string = dev.rxBatch(0, new ixy.PacketBatch(32));
  dev.mac = 'aa:bb:cc:dd:ee:ff';
  await ixy.open('xdp:veth0', { xdpMode: 'skb', mode: 'zero-copy' });
  void n;
}

void misuse;
