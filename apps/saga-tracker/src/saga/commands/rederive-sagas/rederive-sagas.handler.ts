import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { StuckTimeouts } from '../../domain';
import { endedFlagOf, sagaKeysAfter } from '../../database/saga.repository';
import { STUCK_TIMEOUTS } from '../../saga.tokens';
import { rederiveSaga } from '../record-step/record-step.handler';

/**
 * RederiveSagas: derives every saga's state again from its recorded steps, one short transaction per saga,
 * after the derivation rules changed (the steps are the record; the state rows are only derived from them).
 */
@Injectable()
export class RederiveSagasHandler {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(STUCK_TIMEOUTS) private readonly timeouts: StuckTimeouts,
  ) {}

  /** Returns how many sagas were derived again and how many of those changed their ended flag. */
  async execute(batch = 500): Promise<{ sagas: number; endedChanged: number }> {
    let after: { tenantId: string; sagaId: string } | null = null;
    let sagas = 0;
    let endedChanged = 0;
    for (;;) {
      const keys = await sagaKeysAfter(this.dataSource, after, batch);
      if (keys.length === 0) return { sagas, endedChanged };
      for (const key of keys) {
        const changed = await this.dataSource.transaction(async (tx) => {
          const was = await endedFlagOf(tx, key.tenantId, key.sagaId);
          const { state } = await rederiveSaga(tx, key.tenantId, key.sagaId, this.timeouts, new Date());
          return was !== state.terminal;
        });
        sagas += 1;
        if (changed) endedChanged += 1;
      }
      after = keys[keys.length - 1];
    }
  }
}
