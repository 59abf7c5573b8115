import type { User } from '../store/sql/users.js';

/** Who must have a second factor (`--require-2fa`): nobody, admins, or everyone. */
export const TWO_FACTOR_POLICIES = ['off', 'admins', 'all'] as const;
export type TwoFactorPolicy = (typeof TWO_FACTOR_POLICIES)[number];

/** Whether the policy asks this account for a second factor. */
export const secondFactorRequired = (policy: TwoFactorPolicy, user: Pick<User, 'isAdmin'>): boolean => policy === 'all' || (policy === 'admins' && user.isAdmin);
