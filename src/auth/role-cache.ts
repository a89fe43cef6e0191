import type { Role } from '../../schemas/auth.js'

const TTL_MS = 5_000
const MAX_ENTRIES = 10_000

/** Spares the write routes a lookup per write; `users set-role` or `users remove` still takes effect within TTL_MS. */
export class RoleCache {
  private readonly entries = new Map<string, { role: Role | undefined; until: number }>()

  constructor(
    private readonly lookup: (name: string) => Promise<Role | undefined>,
    private readonly clock: () => number
  ) {}

  async get(name: string): Promise<Role | undefined> {
    const now = this.clock()
    const cached = this.entries.get(name)
    if (cached !== undefined && cached.until > now) return cached.role
    const role = await this.lookup(name)
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    this.entries.set(name, { role, until: now + TTL_MS })
    return role
  }
}
