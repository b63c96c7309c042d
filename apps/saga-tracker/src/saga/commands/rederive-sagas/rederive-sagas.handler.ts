import { DataSource } from 'typeorm';
import { StuckTimeouts } from '../../domain';
import { sagaKeysAfter } from '../../database/saga.repository';
import { rederiveSaga } from '../record-step/record-step.handler';

/**
 * RederiveSagas: derives every saga's state again from its recorded steps, one short transaction per saga,
 * after the derivation rules changed (the steps are the record; the state rows are only derived from them).
 */
export class RederiveSagas {
  constructor(
    private readonly dataSource: DataSource,
    private readonly timeouts: StuckTimeouts,
    private readonly batch = 500,
  ) {}

  /** Returns how many sagas were derived again and how many of those changed their ended flag. */
  async execute(): Promise<{ sagas: number; endedChanged: number }> {
    let after: { tenantId: string; sagaId: string } | null = null;
    let sagas = 0;
    let endedChanged = 0;
    for (;;) {
      const keys = await sagaKeysAfter(this.dataSource, after, this.batch);
      if (keys.length === 0) return { sagas, endedChanged };
      for (const key of keys) {
        const changed = await this.dataSource.transaction(async (tx) => {
          const [was]: { terminal: boolean }[] = await tx.query(
            `SELECT terminal FROM saga WHERE tenant_id = $1 AND saga_id = $2 FOR UPDATE`,
            [key.tenantId, key.sagaId],
          );
          const { state } = await rederiveSaga(tx, key.tenantId, key.sagaId, this.timeouts, new Date());
          return was.terminal !== state.terminal;
        });
        sagas += 1;
        if (changed) endedChanged += 1;
      }
      after = keys[keys.length - 1];
    }
  }
}
