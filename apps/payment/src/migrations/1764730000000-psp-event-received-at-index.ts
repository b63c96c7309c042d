import { MigrationInterface, QueryRunner } from 'typeorm';

/** Lets the retention job find the oldest PSP event ids without scanning the whole dedupe table. */
export class PspEventReceivedAtIndex1764730000000 implements MigrationInterface {
  name = 'PspEventReceivedAtIndex1764730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX psp_event_received_at_idx ON psp_event (received_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX psp_event_received_at_idx`);
  }
}
