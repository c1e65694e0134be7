// The registry index's tables once its network is live: what agent-value-table.ts holds (one value per agent, the
// agents of each value, values numbered for good), with the same numbers, in a temporary sqlite database rather than
// in the process's memory.
//
// Why: the typed arrays grow with the registry, 13 MB with 100,000 agents and ten times that with a million, while
// here the process holds sqlite's page cache (CACHE_KIB per database) and its statements whatever the registry's size.
// The database is anonymous: sqlite keeps it in a file of its temporary directory that it deletes as it opens it, so
// nothing is left behind by a crash; it is derived state, rebuilt from the stored index or the chain at every start.
// Why not from the start: a backfill gives every agent its values once, in 0.2 s for 100,000 agents in the arrays and
// about 2 s here, so the arrays take the backfill and are copied here in slices once the network is live
// (human-agent-index.ts), while the follower goes on.
import Database from 'better-sqlite3';
import { type AgentValueTable, MAX_AGENT_ID, type ValueCodec, type ValueTable } from './agent-value-table.js';

/** sqlite's page cache per database, in KiB: the index's reads are by key, a few pages each. */
const CACHE_KIB = 2048;

/** A temporary database for an index's tables: no journal and no syncs, since nothing in it outlives the process. */
export function temporaryDatabase(): Database.Database {
  const db = new Database('');
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma(`cache_size = -${CACHE_KIB}`);
  return db;
}

/** Whether `error` is sqlite's own (the database's file cannot be written or read), not a refused value. */
export const isSqliteFailure = (error: unknown): boolean => error instanceof Database.SqliteError;

/** Runs `work` in one transaction (sqlite writes each statement's pages once rather than per statement). */
export function inTransaction<T>(db: Database.Database, work: () => T): T {
  // BEGIN/COMMIT rather than db.transaction(): a change that throws halfway stays applied, as it does in the arrays
  db.exec('BEGIN');
  try {
    return work();
  } finally {
    db.exec('COMMIT');
  }
}

const checkedAgentId = (id: number): number => {
  if (!Number.isSafeInteger(id) || id < 0 || id > MAX_AGENT_ID) throw new RangeError(`Agent id ${id} is outside the index's range`);
  return id;
};

export class DiskValueTable<V> implements ValueTable<V> {
  readonly #codec: ValueCodec<V>;
  readonly #scratch: Buffer;
  #valueCount = 0;
  readonly #heldOf: Database.Statement<[number], number>;
  readonly #bytesOfAgent: Database.Statement<[number], Buffer>;
  readonly #bytesOf: Database.Statement<[number], Buffer>;
  readonly #numberOf: Database.Statement<[Buffer], number>;
  readonly #number: Database.Statement<[number, Buffer]>;
  readonly #hold: Database.Statement<[number, number]>;
  readonly #remove: Database.Statement<[number]>;
  readonly #agentsOf: Database.Statement<[Buffer], number>;
  readonly #agentIds: Database.Statement<[], number>;
  readonly #range: Database.Statement<[number, number], [number, Buffer]>;

  /** The table `name` (a SQL identifier chosen by the caller, not by input) in `db`, created empty. */
  constructor(db: Database.Database, name: string, codec: ValueCodec<V>) {
    this.#codec = codec;
    this.#scratch = Buffer.alloc(codec.width);
    const values = `${name}_values`;
    db.exec(`
      CREATE TABLE ${values} (held INTEGER PRIMARY KEY, bytes BLOB NOT NULL UNIQUE);
      CREATE TABLE ${name} (agent INTEGER PRIMARY KEY, held INTEGER NOT NULL);
      CREATE INDEX ${name}_by_value ON ${name} (held);
    `);
    this.#heldOf = db.prepare<[number], number>(`SELECT held FROM ${name} WHERE agent = ?`).pluck();
    this.#bytesOfAgent = db.prepare<[number], Buffer>(`SELECT bytes FROM ${name} JOIN ${values} USING (held) WHERE agent = ?`).pluck();
    this.#bytesOf = db.prepare<[number], Buffer>(`SELECT bytes FROM ${values} WHERE held = ?`).pluck();
    this.#numberOf = db.prepare<[Buffer], number>(`SELECT held FROM ${values} WHERE bytes = ?`).pluck();
    this.#number = db.prepare<[number, Buffer]>(`INSERT INTO ${values} (held, bytes) VALUES (?, ?)`);
    this.#hold = db.prepare<[number, number]>(
      `INSERT INTO ${name} (agent, held) VALUES (?, ?) ON CONFLICT (agent) DO UPDATE SET held = excluded.held`,
    );
    this.#remove = db.prepare<[number]>(`DELETE FROM ${name} WHERE agent = ?`);
    this.#agentsOf = db.prepare<[Buffer], number>(`SELECT agent FROM ${name} WHERE held = (SELECT held FROM ${values} WHERE bytes = ?)`).pluck();
    this.#agentIds = db.prepare<[], number>(`SELECT agent FROM ${name} ORDER BY agent`).pluck();
    this.#range = db
      .prepare<[number, number], [number, Buffer]>(`SELECT agent, bytes FROM ${name} JOIN ${values} USING (held) WHERE agent >= ? AND agent < ?`)
      .raw();
  }

  get valueCount(): number {
    return this.#valueCount;
  }

  get(agentId: bigint): V | undefined {
    const bytes = this.#bytesOfAgent.get(Number(agentId));
    return bytes === undefined ? undefined : this.#codec.read(bytes, 0);
  }

  heldBy(agentId: number): number {
    return this.#heldOf.get(agentId) ?? 0;
  }

  valueOf(held: number): V | undefined {
    if (held === 0) return undefined;
    const bytes = Number.isInteger(held) && held > 0 && held <= this.#valueCount ? this.#bytesOf.get(held) : undefined;
    if (bytes === undefined) throw new RangeError(`No value numbered ${held}`);
    return this.#codec.read(bytes, 0);
  }

  restore(agentId: number, held: number): void {
    if (held === 0) this.#remove.run(agentId);
    else if (!Number.isInteger(held) || held < 0 || held > this.#valueCount) throw new RangeError(`No value numbered ${held}`);
    else this.#hold.run(checkedAgentId(agentId), held);
  }

  copyTo(agentId: number, target: Buffer, offset: number): boolean {
    const bytes = this.#bytesOfAgent.get(agentId);
    if (bytes === undefined) return false;
    bytes.copy(target, offset);
    return true;
  }

  copyRange(first: number, end: number, into: Buffer, held: Uint8Array): void {
    for (const [agentId, bytes] of this.#range.all(first, end)) {
      bytes.copy(into, (agentId - first) * this.#codec.width);
      held[agentId - first] = 1;
    }
  }

  set(agentId: bigint, value: V | undefined): void {
    const id = checkedAgentId(Number(agentId));
    if (value === undefined) {
      this.#remove.run(id);
      return;
    }
    if (!this.#codec.write(value, this.#scratch)) throw new RangeError(`${value} is not a value of ${this.#codec.width} bytes`);
    let held = this.#numberOf.get(this.#scratch);
    if (held === undefined) {
      held = ++this.#valueCount;
      this.#number.run(held, this.#scratch);
    }
    this.#hold.run(id, held);
  }

  agentIds(): number[] {
    return this.#agentIds.all();
  }

  agentsOf(value: V): number[] {
    return this.#codec.write(value, this.#scratch) ? this.#agentsOf.all(this.#scratch) : [];
  }

  /** Numbers here the values `memory` numbered after this table's last one, up to `upTo`, with their numbers there. */
  copyValues(memory: AgentValueTable<V>, upTo: number): void {
    for (let held = this.#valueCount + 1; held <= upTo; held++) this.#number.run(held, memory.bytesOf(held));
    this.#valueCount = Math.max(this.#valueCount, upTo);
  }

  /** Gives agents [from, to) the values they hold in `memory` (numbered here already), and none to those holding none there. */
  copyAgents(memory: AgentValueTable<V>, from: number, to: number): void {
    for (let id = from; id < to; id++) {
      const held = memory.heldBy(id);
      if (held) this.#hold.run(id, held);
      else this.#remove.run(id);
    }
  }
}
