/**
 * What a deal note must not carry (enterprise spec 4.7; shared/documents/secrets.ts): bank
 * account numbers, passwords and one-time codes, API keys and long random tokens; and the
 * ordinary notes that must pass (amounts, references, dates, ids, links).
 */
import { expect } from 'chai';
import { findSecret, SECRET_MESSAGES, type SecretKind } from '../../../shared/documents/secrets.js';

const cases: [string, SecretKind][] = [
  // Bank account numbers: 10+ digits, single spaces or dashes between digits ignored.
  ['Transfer ke rekening BCA 1234567890 a.n. PT Maju', 'account_number'],
  ['rekening 123-456-7890', 'account_number'],
  ['Acc no: 1234 5678 9012 3456', 'account_number'],
  ['Mandiri 137 00 1234567 8', 'account_number'],
  ['norek:0123456789', 'account_number'],
  ['NIK 3171234567890123', 'account_number'],
  ['Hubungi 0812-3456-7890', 'account_number'],
  ['first 2024-01-15, then 9876543210', 'account_number'],
  // Issue 42: written with dots, dashes, spaces, after a bank word or a currency.
  ['1234.5678.90', 'account_number'],
  ['rekening 1234.5678.90 BCA', 'account_number'],
  ['1234-5678-9012', 'account_number'],
  ['1234 5678 9012', 'account_number'],
  ['Rek. 1234567890', 'account_number'],
  ['No. Rek: 123.456.7890', 'account_number'],
  ['IDR 1234567890', 'account_number'],
  ['Rp 1234567890', 'account_number'],
  ['Rp1500000000 sudah ditransfer', 'account_number'],
  ['USD 1234-5678-90', 'account_number'],
  ['IDR 123 4567 890', 'account_number'],
  ['IDR 1 234 567 890 1', 'account_number'],
  ['transfer Rp 1.500.000 ke 1234567890', 'account_number'],
  ['12.34.56.78.90', 'account_number'],
  ['0123.456.789', 'account_number'],
  ['rek\n1234\n5678\n90', 'account_number'],
  ['1.234.567.890.123.456', 'account_number'],
  // Phone numbers of 10 or more digits cannot be told from a 10-digit account: refused (personal data too).
  ['+62 812 3456 7890', 'account_number'],
  ['Telepon kantor 021-5551234', 'account_number'],
  ['BNI 0123456789 (a.n. Budi)', 'account_number'],
  // Passwords, PINs, one-time codes.
  ['password: x', 'password'],
  ['Password:hunter2', 'password'],
  ['login pakai pwd=abc', 'password'],
  ['kata sandi: rahasia', 'password'],
  ['Kata sandinya adalah rahasia123', 'password'],
  ['the password is hunter2', 'password'],
  ['PIN: 1234', 'password'],
  ['pin 482913', 'password'],
  ['OTP 123456', 'password'],
  ['kode OTP nya 998877', 'password'],
  ['otp=55 66', 'password'],
  ['token: abc', 'password'],
  ['api key = something', 'password'],
  ['https://example.com/share?token=abc', 'password'],
  // API keys.
  ['use sk_live_4eC39HqLyjWDarjtT1zdp7dc for the test', 'api_key'],
  ['sk_test_abcdefgh12', 'api_key'],
  ['key rpe_9f8e7d6c5b4a3f2e1d0c', 'api_key'],
  ['personal rpk_abcdefghijkl', 'api_key'],
  ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'api_key'],
  ['ghp_1234567890abcdefghijABCDEFGHIJ', 'api_key'],
  ['xoxb-123456789012-abcdefghij', 'api_key'],
  ['AKIAIOSFODNN7EXAMPLE', 'api_key'],
  ['eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'api_key'],
  // Long random tokens.
  ['session 9fK2mQ7xL4pR8vN3tB6wY1zA5cD', 'token'],
  ['a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6', 'token'],
  ['https://drive.example.com/file/d/1AbCdEfGhIjKlMnOpQrStUvWxYz012/view', 'token'],
];

const clean = [
  'Barang sudah dikirim, total Rp 10.000.000',
  'Pembayaran Rp 1.000.000.000 untuk tahap 2',
  'Rp150000000 sudah ditransfer',
  'IDR 10 000 000 000 total kontrak',
  'USD 1,000,000,000',
  'Lihat transaksi DL-000123 dan DL-000124',
  'Dikirim 2024-01-15 10:30, tiba 17/01/2024 08:15',
  'Deal 5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3 milestone 7e8f90a1-b2c3-4d5e-8f60-718293a4b5c6',
  'Invoice INV/2024/000123 dan PO-2024-0007',
  'Kirim OTP ke pembeli setelah barang diterima',
  'Kebijakan password perusahaan: lihat lampiran',
  'The password is required for the portal',
  'Please pin the contract to the top',
  'Nomor resi JNE 123456789',
  'Pengadaan_server_tahap_pertama_dan_kedua siap',
  'https://example.com/invoices/2024/abc-def/ghi.pdf',
  'Catatan: supplier minta revisi jadwal; 3 unit rusak, 12 unit baik.',
  '<script>alert(1)</script> stays text',
  'Tahap 1 dari 20',
  // Issue 42: amounts written the usual way, dates, times and short numbers.
  'Rp 1.500.000',
  'Rp 1.500.000,00 dibayar',
  'Rp. 1.000.000.000.000 total kontrak',
  'Rp.1.500.000.000',
  'Harga Rp 1.500.000-2.000.000 per unit',
  '1.234.567.890',
  'USD 1,000,000.50',
  'IDR 10 000 000 000',
  'Rp 1.500.000.000 2 unit',
  'invoice 12345',
  'PO-2024-001',
  'Tanggal 15.01.2024 pukul 10.30',
  '2024.01.15 sampai 2024.02.15',
  'Dikirim 15-01-2024 dan 16-01-2024',
  'Telepon 555-1234 ext. 12',
  'Ukuran 12.50 x 3.75 m',
  'Jadwal 10:30-11:00 dan 13:00-14:30',
];

describe('documents: secrets in notes (findSecret)', () => {
  for (const [text, kind] of cases) {
    it(`refuses ${JSON.stringify(text)} as ${kind}`, () => {
      expect(findSecret(text)).to.equal(kind);
    });
  }

  for (const text of clean) {
    it(`lets ${JSON.stringify(text)} pass`, () => {
      expect(findSecret(text)).to.equal(null);
    });
  }

  it('has a message for every kind that says what is refused', () => {
    expect(Object.keys(SECRET_MESSAGES).sort()).to.deep.equal(['account_number', 'api_key', 'password', 'token']);
    expect(SECRET_MESSAGES.account_number).to.include('bank account number');
    expect(SECRET_MESSAGES.password).to.include('password');
  });
});
