/** The QRIS image of a payment, drawn on the server from the gateway's QR string (no third-party image host). */
import QRCode from 'qrcode';

/** A PNG data URL of the QR string (error correction M, 240 px): the page embeds it with `img-src data:`. */
export async function renderQrDataUrl(qrString: string): Promise<string> {
  return QRCode.toDataURL(qrString, { errorCorrectionLevel: 'M', margin: 1, width: 240, type: 'image/png' });
}
