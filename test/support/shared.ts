// The shared/ folder (interface spec data: ERC-8004 ABIs, the A2A schema) sits beside the project in CI and
// on developer machines. SHARED_DIR points elsewhere; a clone without it skips the tests that need its files.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const SHARED_DIR = process.env['SHARED_DIR'] ?? resolve(import.meta.dirname, '../../../shared');

export const sharedPath = (relative: string): string => join(SHARED_DIR, relative);

export const hasSharedFile = (relative: string): boolean => existsSync(sharedPath(relative));

export const readSharedJson = <T>(relative: string): T => JSON.parse(readFileSync(sharedPath(relative), 'utf8')) as T;

/** Why a test that needs `relative` is skipped, when the file is missing (its name says so in the report). */
export const unlessShared = (relative: string, name: string): string =>
  hasSharedFile(relative) ? name : `${name} (skipped: ${sharedPath(relative)} is not on this machine; set SHARED_DIR)`;
