import { closeSync, fchmodSync, openSync } from 'node:fs'

/** Readable and writable by the owner only: the mode of every file holding password hashes or secrets. */
export const PRIVATE_MODE = 0o600

/** Creates `path` empty with mode 0600 unless something is there; the fchmod undoes the umask. Whether it made the file. */
export function createPrivateFile(path: string): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx', PRIVATE_MODE)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    fchmodSync(fd, PRIVATE_MODE)
  } finally {
    closeSync(fd)
  }
  return true
}
