import QRCode from 'qrcode';

/**
 * A QR code as inline SVG (the pages' CSP allows no other image), labelled for screen readers:
 * the verifier's request and the issuer's offer are shown this way.
 */
export async function qrCodeSvg(text: string, label: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return svg.replace('<svg ', `<svg class="qr" role="img" aria-label="${label}" focusable="false" `);
}
