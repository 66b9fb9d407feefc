import type { UserRow } from './repo.js';

/** The spec's User resource (consumer spec section 2). */
export interface UserView {
  id: string;
  email: string;
  role: string;
  full_name: string;
  username: string;
  phone: string | null;
  kyc_status: string;
  balance: number;
  is_suspended: boolean;
  is_verified: boolean;
  two_factor_method: string;
  dashboard_tour_completed_at: string | null;
  social_instagram: string | null;
  social_shopee: string | null;
  social_tiktokshop: string | null;
  created_at: string;
  has_password: boolean;
  email_verification_required: boolean;
}

export function serializeUser(u: UserRow): UserView {
  return {
    id: u.id,
    email: u.email,
    role: u.role,
    full_name: u.full_name,
    username: u.username,
    phone: u.phone,
    kyc_status: u.kyc_status,
    balance: u.balance,
    is_suspended: u.status === 'suspended',
    is_verified: u.email_verified_at !== null,
    two_factor_method: u.two_factor_method,
    dashboard_tour_completed_at: u.dashboard_tour_completed_at?.toISOString() ?? null,
    social_instagram: u.social_instagram,
    social_shopee: u.social_shopee,
    social_tiktokshop: u.social_tiktokshop,
    created_at: u.created_at.toISOString(),
    has_password: u.password_hash !== null,
    email_verification_required: u.email_verified_at === null,
  };
}
